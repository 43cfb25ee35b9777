"""python -m deploy serves the LTI tool when given its settings: a supervised gunicorn program, and nginx
sends /lti/ to it (checked with nginx -t); the program's command really serves the tool's key set. The LMS
worker (deploy.lti.services: grades and rosters) is a supervised program beside it, and its command really
starts its loop."""
from __future__ import annotations

import json
import subprocess
import sys
import time

import httpx

from deploy.stack import NGINX, Stack, free_port, lti_command


def _settings(tmp_path):
    path = tmp_path / "lti.json"
    path.write_text(json.dumps({"app_url": "https://class.example/", "tool_url": "https://class.example/lti",
                                "key_dir": str(tmp_path / "keys"), "platforms": [{
                                    "issuer": "https://lms.example", "client_id": "c1", "deployment_ids": ["d1"],
                                    "key_set_url": "https://lms.example/jwks",
                                    "auth_login_url": "https://lms.example/auth",
                                    "auth_token_url": "https://lms.example/token"}]}))
    return path


def test_the_stack_supervises_the_tool_and_routes_lti_to_it(tmp_path):
    run_dir = tmp_path / "run"
    stack = Stack(1, database="postgresql://fl@127.0.0.1:1/faultlines", run_dir=run_dir,
                  lti_settings=_settings(tmp_path))
    stack.write_configs()
    supervisord = (run_dir / "supervisord.conf").read_text()
    assert "[program:lti]" in supervisord and "gunicorn" in supervisord and "FAULTLINES_LTI_SETTINGS" in supervisord
    worker = supervisord[supervisord.index("[program:lti-worker]"):]
    assert "-m deploy.lti.services" in worker.split("\n\n")[0] and "FAULTLINES_DB" in worker
    nginx = (run_dir / "nginx.conf").read_text()
    assert "location /lti/" in nginx and f"proxy_pass http://127.0.0.1:{stack.lti_port};" in nginx
    check = subprocess.run([NGINX, "-t", "-p", f"{run_dir}/", "-c", str(run_dir / "nginx.conf"), "-e",
                            str(run_dir / "error.log")], capture_output=True, text=True, timeout=30)
    assert check.returncode == 0, check.stderr


def test_without_settings_there_is_no_lti_program(tmp_path):
    run_dir = tmp_path / "run"
    Stack(1, database="postgresql://fl@127.0.0.1:1/faultlines", run_dir=run_dir).write_configs()
    assert "[program:lti" not in (run_dir / "supervisord.conf").read_text()
    assert "/lti/" not in (run_dir / "nginx.conf").read_text()


def test_the_program_command_serves_the_key_set(tmp_path):
    port = free_port()
    env = {"FAULTLINES_LTI_SETTINGS": str(_settings(tmp_path)), "FAULTLINES_DB": str(tmp_path / "lti.duckdb"),
           "PATH": "/usr/bin:/bin"}
    proc = subprocess.Popen(lti_command(port, workers=1), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        keys = None
        for _ in range(100):   # at most 100 tries, 0.2 s apart
            try:
                keys = httpx.get(f"http://127.0.0.1:{port}/lti/jwks", timeout=2).json()["keys"]
                break
            except httpx.TransportError:
                time.sleep(0.2)
        assert keys and keys[0]["kty"] == "RSA", proc.stderr
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_the_lms_worker_program_starts_its_loop(tmp_path):
    env = {"FAULTLINES_LTI_SETTINGS": str(_settings(tmp_path)), "FAULTLINES_DB": str(tmp_path / "lti.duckdb"),
           "PATH": "/usr/bin:/bin"}
    proc = subprocess.Popen([sys.executable, "-m", "deploy.lti.services"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stderr.readline()   # blocks until the program has loaded its settings and opened the store
        assert "sending LTI grades and reading rosters every 5 s" in first, first
    finally:
        proc.terminate()
        proc.wait(timeout=10)
