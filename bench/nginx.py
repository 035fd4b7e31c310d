"""A real nginx on a free loopback port serving a published folder, for `make bench` and
`make bench-scale`: with `log_bytes`, each response's path, status and body bytes are logged
(nginx's own count of what it sent), and `take_log` reads them."""
import os, shutil, socket, subprocess, sys, tempfile, time


class Nginx:
    def __init__(self, root, log_bytes=False):
        self.folder = tempfile.mkdtemp(prefix="coursepack-bench-nginx-")
        s = socket.socket(); s.bind(("127.0.0.1", 0)); self.port = s.getsockname()[1]; s.close()
        self.log = os.path.join(self.folder, "access.log")
        logging = f"log_format bytes '$uri $status $body_bytes_sent'; access_log {self.log} bytes;" if log_bytes else "access_log off;"
        conf = os.path.join(self.folder, "nginx.conf")
        with open(conf, "w") as f:
            f.write(f"""user root; worker_processes 1; error_log {self.folder}/error.log; pid {self.folder}/nginx.pid;
events {{ worker_connections 256; }}
http {{ {logging} sendfile on;
  client_body_temp_path {self.folder}/b; proxy_temp_path {self.folder}/p;
  fastcgi_temp_path {self.folder}/f; uwsgi_temp_path {self.folder}/u; scgi_temp_path {self.folder}/s;
  server {{ listen 127.0.0.1:{self.port}; root {root}; }} }}
""")
        self.process = subprocess.Popen([shutil.which("nginx") or "/usr/sbin/nginx", "-c", conf, "-p", self.folder, "-g", "daemon off;"])
        self.url = f"http://127.0.0.1:{self.port}"
        for _ in range(100):
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        self.stop()
        sys.exit("nginx did not start")

    def take_log(self):
        """The responses logged since the last call: [(path, status, bytes)]."""
        time.sleep(0.2)
        with open(self.log) as f:
            lines = f.read().splitlines()
        open(self.log, "w").close()
        subprocess.run(["kill", "-USR1", str(self.process.pid)])
        time.sleep(0.2)
        return [(p, int(s), int(b)) for p, s, b in (line.split() for line in lines if line.count(" ") == 2)]

    def stop(self):
        self.process.terminate()
        self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)
