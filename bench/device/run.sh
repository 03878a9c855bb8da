#!/bin/bash
# What the device tool's H200 machine runs, after `npm run build && node bench/device/prepare.mjs` here:
#   run: bash bench/device/run.sh        carry: ['.device']
# Runs the programs the stages send to a GPU host (from .device/scripts, generated from the product's
# modules) on the real GPU, then `check`, `monitor --once` and `bundle` against the box over real SSH
# (.device/exec-server.mjs stands in for sshd). Each step is bounded by `timeout` and by one overall
# deadline, and writes its own files, so one failing step loses nothing of the others. Everything ends
# up in $OUT/device.tgz (and the log in $OUT/run.log).
set -u
T0=$(date +%s)
DEADLINE=$((T0 + ${DEVICE_BUDGET_S:-540}))
ROOT=$PWD
D=$ROOT/.device
S=$D/scripts
R=/tmp/l20-device/results
mkdir -p "$R" /tmp/l20-device/bin
exec > >(tee "${OUT:-/tmp}/run.log") 2>&1
SERVERS=()
finish() {
  [ ${#SERVERS[@]} -gt 0 ] && kill "${SERVERS[@]}" 2>/dev/null
  cd /tmp/l20-device && timeout 60 tar czf "${OUT:-/tmp}/device.tgz" results
}
trap finish EXIT

# step NAME SECONDS CMD...: output in $R/NAME.out, exit status in $R/NAME.rc; never longer than the deadline.
step() {
  local name=$1 want=$2 left
  shift 2
  left=$((DEADLINE - $(date +%s)))
  if [ "$left" -lt 5 ]; then echo "skipped: past the deadline" > "$R/$name.rc"; echo "== $name skipped"; return; fi
  [ "$want" -gt "$left" ] && want=$left
  local t
  t=$(date +%s)
  timeout -k 5 "$want" "$@" > "$R/$name.out" 2>&1
  local rc=$?
  echo "rc=$rc seconds=$(( $(date +%s) - t )) limit=$want" > "$R/$name.rc"
  echo "== $name rc=$rc ($(( $(date +%s) - t )) s)"
}

# The box: what produced every file (fixture headers are written from this).
{
  echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "uname=$(uname -srm)"
  echo "os=$(. /etc/os-release 2>/dev/null; echo "${PRETTY_NAME:-?}")"
  echo "gpu=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1)"
  echo "torch=$(python3 -c 'import torch; v = torch.cuda.nccl.version()
print(torch.__version__, "cuda", torch.version.cuda, "nccl", ".".join(map(str, v)))' 2>&1 | tail -1)"
  echo "torchrun=$(command -v torchrun || echo 'none (python3 -m torch.distributed.run)')"
  for t in sudo ssh xz curl ethtool rdma ibv_devinfo lspci dpkg-query systemctl journalctl dmesg mokutil dkms; do
    echo "tool.$t=$(command -v $t || echo missing)"
  done
  echo "netdevs=$(ls /sys/class/net | tr '\n' ' ')"
  echo "infiniband=$(ls /sys/class/infiniband 2>/dev/null | tr '\n' ' ')"
  echo "id=$(id)"
} > "$R/box.txt" 2>&1
cat "$R/box.txt"

# node (the box has none): unpacked from the carried xz.
NODE=/tmp/l20-device/bin/node
if command -v xz >/dev/null; then xz -dc "$D/node.xz" > $NODE
else python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
  "$D/node.xz" $NODE
fi
chmod +x $NODE
$NODE --version > "$R/node.txt" 2>&1

# The socket interface NCCL and the inventory use: the first that is not loopback (lo when alone).
IF=lo
for n in /sys/class/net/*; do [ "${n##*/}" != lo ] && { IF=${n##*/}; break; }; done

# nvidia-smi probes of gpu-driver and gpudirect, each as the stage sends it.
while IFS=$'\t' read -r id cmd; do
  step "smi-$id" 20 bash -c "$cmd"
done < "$S/nvidia-smi-probes.tsv"

# The benchmark runner looks for ~/.local/bin/torchrun (a user-site install); this one starts the box's
# torch. The stage asks for 8 ranks a node (8×L20); this box has one GPU, so world size 1.
BH=/tmp/l20-device/home
mkdir -p $BH/.local/bin
cat > $BH/.local/bin/torchrun <<'SH'
#!/bin/bash
a=(); prev=
for x in "$@"; do [ "$prev" = --nproc-per-node ] && x=1; a+=("$x"); prev=$x; done
if command -v torchrun >/dev/null; then exec torchrun "${a[@]}"; fi
exec python3 -m torch.distributed.run "${a[@]}"
SH
chmod +x $BH/.local/bin/torchrun

[ -f /etc/nccl.conf ] && cp /etc/nccl.conf /tmp/l20-device/nccl.conf.orig
$NODE "$D/nccl-conf.mjs" "$IF" > "$R/nccl-ours.conf" 2> "$R/nccl-ours.conf.err"
cp "$S/tutorial-nccl.conf" "$R/nccl-tutorial.conf"
sed "s/^NCCL_SOCKET_IFNAME=.*/NCCL_SOCKET_IFNAME=$IF/" "$S/tutorial-nccl.conf" > "$R/nccl-tutorial-ifname.conf"
PORT=29510
mapfile -t DEBUG_ENV < "$S/debug-env.txt"
# bench NAME CONF [VAR=VALUE…]: the stage's runner (bench-run.sh: nnodes 1, node rank 0, master
# 127.0.0.1) with CONF as /etc/nccl.conf and the stage's NCCL_DEBUG environment.
bench() {
  local name=$1 conf=$2
  shift 2
  if [ -n "$conf" ]; then cp "$conf" /etc/nccl.conf; else rm -f /etc/nccl.conf; fi
  step "bench-$name" 120 env HOME=$BH NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 \
    "${DEBUG_ENV[@]}" "$@" bash -s -- 1 0 127.0.0.1 $PORT < "$S/bench-run.sh"
  PORT=$((PORT + 1))
}
bench ours "$R/nccl-ours.conf"

# check over real SSH: the exec server on 127.0.0.1, an inventory of this one host.
SSHD=/tmp/l20-device/ssh
mkdir -p $SSHD
serve() { # serve DIR [PATH]: starts an exec server, waits for its port file
  rm -f "$1/port"
  mkdir -p "$1"
  PATH=${2:-$PATH} $NODE "$D/exec-server.mjs" "$1" > "$1/server.log" 2>&1 &
  SERVERS+=($!)
  for _ in $(seq 50); do [ -s "$1/port" ] && break; sleep 0.2; done
  cat > "$1/inventory.json" <<JSON
{"version": 1, "hosts": [{"name": "h200", "address": "127.0.0.1", "port": $(cat "$1/port" 2>/dev/null || echo 22),
  "user": "$(id -un)", "auth": {"method": "identityFile", "path": "$1/id_ed25519"}, "role": "head",
  "mgmtInterface": "$IF", "knownHostsFile": "$1/known_hosts"}],
 "network": {"design": "A", "mtu": 9000}, "qos": {"priority": 3, "dscp": 26, "trust": "dscp"},
 "nccl": {"gidIndex": "auto", "crossNic": 0, "debug": "WARN"}, "ray": {"port": 6379, "dashboardPort": 8265},
 "vllm": {"model": "Qwen/Qwen2.5-7B-Instruct", "port": 8000, "layout": "auto"}}
JSON
}
CLI="$NODE $D/l20-setup.mjs"
export XDG_CONFIG_HOME=/tmp/l20-device/config
serve $SSHD
cp $SSHD/inventory.json "$R/inventory.json"
step check 170 $CLI check --inventory $SSHD/inventory.json --json

bench tutorial "$R/nccl-tutorial.conf"
bench socket "$R/nccl-ours.conf" NCCL_NET=Socket

# The monitor's host loop and GPU sampler while the GPU works (a few seconds of matrix products).
cat > /tmp/l20-device/load.py <<'PY'
import sys, time, torch
a = torch.randn(8192, 8192, device="cuda")
t = time.time()
while time.time() - t < float(sys.argv[1]):
    b = a @ a
    torch.cuda.synchronize()
PY
python3 /tmp/l20-device/load.py 14 > "$R/load.out" 2>&1 &
LOAD=$!
sleep 6
step gpu-sampler 4 bash "$S/gpu-sampler.sh"
step host-loop 6 bash "$S/host-loop.sh"
wait $LOAD

step monitor 60 $CLI monitor --inventory $SSHD/inventory.json --once --json
step bundle 90 $CLI bundle --inventory $SSHD/inventory.json --out "$R/bundle.tgz"
bench tutorial-ifname "$R/nccl-tutorial-ifname.conf"

# Without sudo on the box every root probe fails at `sudo -n`; a second check with a pass-through sudo
# (root already) shows what the stages read when sudo works.
if ! command -v sudo >/dev/null; then
  mkdir -p /tmp/l20-device/shim
  cat > /tmp/l20-device/shim/sudo <<'SH'
#!/bin/bash
while [ $# -gt 0 ]; do case $1 in -n|-k|-S) shift ;; -p) shift 2 ;; --) shift; break ;; *) break ;; esac; done
exec "$@"
SH
  chmod +x /tmp/l20-device/shim/sudo
  serve /tmp/l20-device/ssh-shim "/tmp/l20-device/shim:$PATH"
  step check-sudo-shim 150 $CLI check --inventory /tmp/l20-device/ssh-shim/inventory.json --json
fi

if [ -f /tmp/l20-device/nccl.conf.orig ]; then cp /tmp/l20-device/nccl.conf.orig /etc/nccl.conf
else rm -f /etc/nccl.conf
fi
cp $SSHD/server.log "$R/exec-server.log" 2>/dev/null
cp $SSHD/execs.jsonl "$R/check-execs.jsonl" 2>/dev/null
cp /tmp/l20-device/ssh-shim/execs.jsonl "$R/check-sudo-shim-execs.jsonl" 2>/dev/null
echo "total $(( $(date +%s) - T0 )) s"
