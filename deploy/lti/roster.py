"""The roster reader: each LTI class's members from its LMS's Names and Role Provisioning Service, read with
pylti1p3's NRPS client (an access token first, then the membership pages) into the store
(drills.store.lti_roster). The LMS worker (`python -m deploy.lti.services`) runs it every few seconds; a class
is read when it is new, when an instructor asks, or every 15 minutes. A failed read keeps the last roster."""
from __future__ import annotations

import logging

import requests
from pylti1p3.exception import LtiException, LtiServiceException
from pylti1p3.names_roles import NamesRolesProvisioningService

from deploy.lti.app import Connectors
from deploy.lti.grades import why
from deploy.lti.settings import LtiSettings
from drills.store.lti_roster import MAX_MEMBERS

MAX_PAGES = 100   # membership pages read per class, so a platform's endless "next" link ends somewhere
log = logging.getLogger("faultlines.lti.roster")


def read_members(connector, url: str) -> list[dict]:
    service = NamesRolesProvisioningService(connector, {"context_memberships_url": url})
    members: list[dict] = []
    page_url: str | None = url
    for _ in range(MAX_PAGES):
        page, page_url = service.get_members_page(page_url)
        members += page
        if not page_url or len(members) >= MAX_MEMBERS:
            break
    return members


def sync_rosters(store, settings: LtiSettings, connectors: Connectors | None = None) -> tuple[int, int]:
    """Read every due class's roster; returns (read, failed). After one failure a platform's other classes wait
    for a later pass, so an unreachable LMS costs one timeout a pass."""
    connectors = connectors or Connectors(settings)
    read = failed = 0
    failing: set[tuple[str, str]] = set()
    for source in store.lti_rosters_due():
        if (source.issuer, source.client_id) in failing:
            continue
        try:
            connector = connectors.require(source.issuer, source.client_id)
            kept = store.replace_lti_roster(source.cohort, read_members(connector, source.memberships_url))
        except (LtiException, LtiServiceException, requests.RequestException, ValueError) as error:
            store.lti_roster_failed(source.cohort, why(error))
            log.warning("roster of class %s not read (%s)", source.cohort, why(error))
            connectors.forget(source.issuer, source.client_id)
            failing.add((source.issuer, source.client_id))
            failed += 1
        else:
            log.info("roster of class %s read: %d members", source.cohort, kept)
            read += 1
    return read, failed
