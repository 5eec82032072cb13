"""haconform: model/kernel."""
