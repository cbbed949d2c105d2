#!/usr/bin/env python3
"""Figures for `robota attach` (issue 28), with the release binary and the mock of
../shared/bench: how soon an attached client shows the session's transcript, and its RSS.
A background session answers one prompt; then `robota attach` runs five times in a
pseudo-terminal (100x30), each detached with Ctrl+B d."""
import os, pty, time, select, subprocess, json, fcntl, termios, struct, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("BIN") or os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release", "robota")
MOCK = os.environ.get("MOCK_PY") or os.path.join(ROOT, "..", "shared", "bench", "mockllm.py")
T = tempfile.mkdtemp()
subprocess.check_call(["git", "init", "-q", os.path.join(T, "repo")])
mock = subprocess.Popen(["python3", MOCK, "--port", "0", "--quiet", "--port-file", T + "/port"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(100):
    if os.path.exists(T + "/port") and open(T + "/port").read().strip(): break
    time.sleep(0.05)
port = open(T + "/port").read().strip()
env = dict(os.environ, ROBOTA_HOME=T + "/home", ANTHROPIC_BASE_URL=f"http://127.0.0.1:{port}", ANTHROPIC_API_KEY="sk-ant-x", TERM="xterm-256color", HOME=T)
bid = subprocess.check_output([BIN, "--bg", "say hello"], cwd=T + "/repo", env=env).decode().strip()
for _ in range(200):
    st=json.loads(subprocess.check_output([BIN,"ps","--json"], env=env))
    if st and st[0]["state"]=="idle": break
    time.sleep(0.05)
res=[]
for run in range(5):
    t0=time.time()
    pid, fd = pty.fork()
    if pid==0:
        os.chdir(T + "/repo"); os.execve(BIN,[BIN,"attach",bid],env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH",30,100,0,0))
    out=b""; first=None
    end=time.time()+5
    while time.time()<end:
        r,_,_=select.select([fd],[],[],0.05)
        if r:
            try: out+=os.read(fd,65536)
            except OSError: break
            if first is None and b"hello" in out.lower()[-20000:] and b"say" in out: first=time.time()-t0
        if first and time.time()-t0>first+0.5: break
    rss=[l for l in open(f"/proc/{pid}/status") if l.startswith(("VmHWM","VmRSS"))]
    os.write(fd,b"\x02"); time.sleep(0.2); os.write(fd,b"d")
    os.waitpid(pid,0)
    res.append((first, rss))
for r in res: print("transcript on screen after %.0f ms;"%((r[0] or -1)*1000), " ".join(x.strip() for x in r[1]))
subprocess.call([BIN,"stop",bid],env=env,stdout=subprocess.DEVNULL)
mock.kill()
