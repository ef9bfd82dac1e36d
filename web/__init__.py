"""devhostd's web layer. DEVHOSTD_PACKAGE marks this package as devhostd's own: ``web`` is also
the name the web.py distribution installs (devhostd/packages.py refuses to start on that one)."""
DEVHOSTD_PACKAGE = True
