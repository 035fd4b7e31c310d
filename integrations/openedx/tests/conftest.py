import contextlib
import os
import shutil
import socket
import subprocess
import time

import pytest
from celery import Celery
from kombu import pools

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))

# The platform configures Celery from Django settings; the tests do the same with an eager app.
app = Celery("coursepack-tests")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.set_default()


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_redis():
    """A real redis-server (Debian's) on a free loopback port: (process, URL of its database 0)."""
    binary = shutil.which("redis-server")
    if not binary:
        pytest.fail("redis-server is needed (apt-get install redis-server; scripts/ensure-deps.sh --test installs it)")
    port = free_port()
    server = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        with socket.socket() as attempt:
            if attempt.connect_ex(("127.0.0.1", port)) == 0:
                return server, f"redis://127.0.0.1:{port}/0"
        time.sleep(0.05)
    server.kill()
    pytest.fail(f"redis-server did not listen on 127.0.0.1:{port}")


@pytest.fixture
def redis_broker():
    """A real redis-server, started and stopped by the test."""
    server, url = start_redis()
    yield url
    server.terminate()
    server.wait(timeout=10)


def forget_broker_connections(celery_app):
    """Drops every broker connection pool. kombu keeps its pools in process-wide groups
    (kombu.pools.connections and .producers, keyed by broker URL) and Celery's app only points at
    them: closing the app's pool without emptying those groups leaves a closed pool registered
    under that URL, and the next task sent to it (an eager task acquires a producer too) fails
    with kombu's "Acquire on closed pool". pools.reset() closes and forgets them all."""
    pools.reset()
    celery_app._pool = None
    celery_app.amqp._producer_pool = None


@contextlib.contextmanager
def sending_to(broker_url):
    """The tests' Celery app sending to a real broker instead of running tasks eagerly;
    afterwards eager again, with no pool of either broker left behind for what runs next."""
    saved = {name: app.conf[name] for name in ("broker_url", "task_always_eager")}
    app.conf.update(broker_url=broker_url, task_always_eager=False)
    forget_broker_connections(app)  # connections made for another broker URL must not be reused
    try:
        yield app
    finally:
        app.conf.update(saved)
        forget_broker_connections(app)


@pytest.fixture
def real_broker(redis_broker):
    with sending_to(redis_broker) as celery_app:
        yield celery_app, redis_broker


@pytest.fixture
def nginx(tmp_path):
    """A real nginx serving a web root on a free loopback port: (web root, base URL)."""
    binary = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
    if not binary:
        pytest.fail("nginx is needed (apt-get install nginx; scripts/ensure-deps.sh --test installs it)")
    webroot, scratch, port = tmp_path / "webroot", tmp_path / "nginx", free_port()
    webroot.mkdir()
    scratch.mkdir()
    # Workers as root: pytest's temporary folders are readable by their owner only.
    config = scratch / "nginx.conf"
    config.write_text(f"""user root;
daemon off;
worker_processes 1;
pid {scratch}/nginx.pid;
error_log {scratch}/error.log;
events {{ worker_connections 64; }}
http {{
    access_log off;
    client_body_temp_path {scratch}/body; proxy_temp_path {scratch}/proxy; fastcgi_temp_path {scratch}/fastcgi;
    uwsgi_temp_path {scratch}/uwsgi; scgi_temp_path {scratch}/scgi;
    server {{ listen 127.0.0.1:{port}; root {webroot}; }}
}}
""")
    server = subprocess.Popen([binary, "-c", str(config), "-p", str(scratch)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        with socket.socket() as attempt:
            if attempt.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.05)
    else:
        server.kill()
        pytest.fail(f"nginx did not listen on 127.0.0.1:{port}: {(scratch / 'error.log').read_text()}")
    yield webroot, f"http://127.0.0.1:{port}"
    server.terminate()
    server.wait(timeout=10)
