"""haconform: traces."""
