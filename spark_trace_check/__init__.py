"""haconform: spark_trace_check. Importing it installs the optional compiled path's finder (`traces.fastpath`)."""

import traces  # noqa: F401
