"""The LMS worker, a supervised program beside the LTI tool (`python -m deploy.lti.services`): every few
seconds it posts due grades (deploy.lti.grades) and reads due rosters (deploy.lti.roster). Everything it does
is kept in the store, so a restart or an LMS outage loses nothing; it only delays."""
from __future__ import annotations

import logging
import time

from deploy.lti.app import Connectors
from deploy.lti.grades import send_due
from deploy.lti.roster import sync_rosters
from deploy.lti.settings import LtiSettings, load_settings

POLL_S = 5.0   # how often the worker looks for due grades and rosters
log = logging.getLogger("faultlines.lti")


def one_pass(store, settings: LtiSettings) -> None:
    connectors = Connectors(settings)   # one access token per platform and pass
    send_due(store, settings, connectors=connectors)
    sync_rosters(store, settings, connectors=connectors)


def main() -> None:   # pragma: no cover - the supervised loop; one_pass and its parts are what tests drive
    from drills.backends import open_store

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    settings = load_settings()
    store = open_store()
    log.info("sending LTI grades and reading rosters every %.0f s", POLL_S)
    while True:
        try:
            one_pass(store, settings)
        except Exception:   # a store hiccup: logged, and the next pass tries again
            log.exception("LMS pass failed")
        time.sleep(POLL_S)


if __name__ == "__main__":
    main()
