"""The dashboard (Jinja2 + HTMX): thin handlers over the service layer."""
