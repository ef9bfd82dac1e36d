"""devhostd's own HTTP routes, one module a family; each has ``install(app, context)``
(web/app.build_routes)."""
