"""The dashboard for humans (Jinja2 + HTMX): thin handlers over the service layer.

    routes.py     what `hub.app` mounts: the dashboard as one sub-application at `/`
    dashboard.py  that sub-application: its routes, sign-in cookie, CSRF, error pages
    signin.py     login with a password or a personal token, logout, "who is signed in",
                  and live streams that end when the sign-in does
    pages.py      the projects overview and the project page
    live.py       the project event log as the dashboard shows it, and its live stream
    reviews.py    the review queue and the submission page, where a human approves or rejects
    review_form.py  the decision form's fields (findings fieldsets), read back and re-shown
    knowledge.py  a project's lessons and their search, a lesson's history, a project's rules
    templates.py  the Jinja2 environment (templates and static files live in `web/`)
"""
