"""haconform: traces. Importing it installs the optional compiled path's finder (`traces.fastpath`)."""

from traces import fastpath

fastpath.install()
