"""Serving a class: PostgreSQL, N app processes and nginx, each a service that supervisord keeps running.

`python -m deploy` starts the whole stack on one machine (deploy/stack.py); the same templates serve an install
on several hosts, a container (Dockerfile, compose.yaml) and a Kubernetes sketch (kubernetes.yaml).
"""
