"""The App's routes beside the page, at /api/…: the numbers of the switch view's toggles and a class's version.
The top of the components: a route may ask the caches and a view's pure parts, and nothing imports it but the App."""
