"""End-to-end tests: the chapters in JupyterLab in a real browser (make e2e)."""
