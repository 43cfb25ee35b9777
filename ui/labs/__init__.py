"""The labs' pages: the hot-tenant event store and the PostgreSQL lab."""
