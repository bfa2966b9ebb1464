#!/usr/bin/env python3
"""User-space instructions per request, GET /health against POST /api/v1/contacts.

Runs the server under callgrind (valgrind), sends a warm-up, then measures four windows
(health, writes, health, writes) of N requests each from 8 keep-alive connections, zeroing
callgrind's counters before a window and dumping them after it. Instruction counts do not
move with a noisy host the way CPU time does, so two builds can be compared a few hundred
instructions apart. They leave out the kernel (about a fifth of a write's CPU) and cache
misses, so they complement the load generator's CPU per request rather than replace it.
Periodic work (metrics upkeep, the store's timers) is counted in whichever window it falls,
and a window is far longer under callgrind than natively.

    python3 benches/callgrind/requests.py target/release/switchboard [N] [--keep PREFIX]

--keep writes each window's callgrind file to PREFIX.<window> for callgrind_annotate.
"""
import argparse, glob, http.client, json, os, subprocess, tempfile, threading, time

API, ADMIN, TOKEN = 18090, 18091, "callgrind-admin-token-123456"

def request(port, method, path, body=None, token=None, conn=None):
    conn = conn or http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    headers = {"content-type": "application/json"}
    if token:
        headers["authorization"] = "Bearer " + token
    conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
    answer = conn.getresponse()
    data = answer.read()
    return answer.status, data, conn

def main():
    args = argparse.ArgumentParser()
    args.add_argument("binary")
    args.add_argument("n", nargs="?", type=int, default=1000)
    args.add_argument("--keep")
    args = args.parse_args()
    folder = tempfile.mkdtemp(prefix="switchboard-callgrind.")
    env = dict(os.environ, SWITCHBOARD_DATA_DIR=folder + "/data",
               SWITCHBOARD_ADDR=f"127.0.0.1:{API}", SWITCHBOARD_ADMIN_ADDR=f"127.0.0.1:{ADMIN}",
               SWITCHBOARD_ADMIN_TOKEN=TOKEN, SWITCHBOARD_RATE_LIMIT_PER_MINUTE="0")
    server = subprocess.Popen(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={folder}/cg.%p", args.binary, "serve"],
        env=env, stdout=open(folder + "/server.log", "w"), stderr=subprocess.STDOUT)
    try:
        for _ in range(600):
            try:
                if request(API, "GET", "/health")[0] == 200:
                    break
            except OSError:
                time.sleep(0.2)
        keys = []
        for i in range(10):
            status, data, _ = request(ADMIN, "POST", "/admin/workspaces", {"name": f"callgrind {i}"}, TOKEN)
            assert status == 201, (status, data)
            keys.append(json.loads(data)["api_key"])

        def send(kind, n, connections=8):
            def one_connection(first):
                conn = None
                for j in range(first, n, connections):
                    if kind == "health":
                        status, _, conn = request(API, "GET", "/health", conn=conn)
                    else:
                        body = {"first_name": "Ann", "last_name": "Writer",
                                "email": f"w{kind}{j}@loadtest.example"}
                        status, _, conn = request(API, "POST", "/api/v1/contacts", body,
                                                  keys[j % len(keys)], conn=conn)
                    assert status in (200, 201), status
            threads = [threading.Thread(target=one_connection, args=(t,)) for t in range(connections)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()

        def callgrind(command):
            subprocess.run(["callgrind_control", command, str(server.pid)], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        send("warm", 500)
        send("health", 300)
        per_request = {}
        for window in ["health", "writes", "health2", "writes2"]:
            callgrind("-z")
            send("health" if window.startswith("health") else window, args.n)
            callgrind("-d")
            time.sleep(1)
            total = 0
            for f in glob.glob(folder + "/cg.*"):
                if f.endswith(f".{server.pid}"):
                    continue
                with open(f) as lines:
                    for line in lines:
                        if line.startswith(("totals:", "summary:")):
                            total += int(line.split()[1])
                            break
                if args.keep:
                    os.rename(f, f"{args.keep}.{window}")
                else:
                    os.remove(f)
            per_request[window] = total / args.n
    finally:
        server.terminate()
        server.wait()
        subprocess.run(["rm", "-rf", folder])
    print(" ".join(f"{k}={v:,.0f}" for k, v in per_request.items()),
          f"writes/health={per_request['writes'] / per_request['health']:.3f}",
          f"{per_request['writes2'] / per_request['health2']:.3f}")

if __name__ == "__main__":
    main()
