"""haconform: spark_trace_check."""
