"""Every OME text and reason, in one place (the docs quote them character for character)."""
