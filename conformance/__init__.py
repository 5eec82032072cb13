"""haconform: conformance."""
