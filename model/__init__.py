"""haconform: model."""
