"""haconform: spec."""
