"""The dashboard for humans (Jinja2 + HTMX): thin handlers over the service layer.

    routes.py     what `hub.app` mounts: the dashboard as one sub-application at `/`
    dashboard.py  that sub-application: its routes, cookie session, CSRF, error pages
    signin.py     login with a password or a personal token, logout, "who is signed in"
    pages.py      the projects overview and the project page
    live.py       the project event log as the dashboard shows it, and its live stream
    templates.py  the Jinja2 environment (templates and static files live in `web/`)
"""
