"""The selection checks in the docs' order (troubleshoot-runtime-selection.md, Step 2), and the
AcceleratorClass policy."""
