# Captures the monitor's sampler output on a machine with real NVIDIA GPUs (the device tool):
#   run: mkdir -p /tmp/cap && OUT0=$OUT && OUT=/tmp/cap bash bench/device/monitor-capture.sh; cd /tmp/cap && tar czf $OUT0/capture.tgz .
# The host loop below is hostLoopScript({ intervalMs: 1000, vllmPort: 8000 }) from src/monitor/scripts.ts as of the capture.
set -u
cd "$OUT"
Q=index,uuid,name,utilization.gpu,memory.used,memory.total,temperature.gpu,power.draw,power.limit,clocks.sm,clocks.max.sm,pstate
nvidia-smi --version > smi-version.txt 2>&1
nvidia-smi --query-gpu=$Q,bogus.field --format=csv,noheader,nounits > fieldtest-bogus.txt 2>&1; echo "rc=$?" >> fieldtest-bogus.txt
timeout 3 nvidia-smi --query-gpu=$Q,clocks_event_reasons.active --format=csv,noheader,nounits -lms 1000 > gpu-lms1000-idle.txt 2>&1
timeout 3 nvidia-smi --query-gpu=index,utilization.gpu --format=csv -lms 1000 > gpu-lms1000-header.txt 2>&1
nvidia-smi --query-compute-apps=gpu_uuid,pid,process_name,used_memory --format=csv,noheader,nounits > apps-idle.txt 2>&1; echo "rc=$?" >> apps-idle.txt
cat > load.py <<'PY'
import torch, time, sys
xs=[]
for d in range(torch.cuda.device_count()):
    a=torch.randn(8192,8192,device=f'cuda:{d}'); xs.append(a)
t=time.time()
while time.time()-t < float(sys.argv[1]):
    for a in xs: b=a@a
    torch.cuda.synchronize()
PY
python3 load.py 9 > load.log 2>&1 &
LP=$!
sleep 3
timeout 4 nvidia-smi --query-gpu=$Q,clocks_event_reasons.active --format=csv,noheader,nounits -lms 1000 > gpu-lms1000-busy.txt 2>&1
nvidia-smi --query-compute-apps=gpu_uuid,pid,process_name,used_memory --format=csv,noheader,nounits > apps-busy.txt 2>&1; echo "rc=$?" >> apps-busy.txt
timeout 3 nvidia-smi --query-compute-apps=gpu_uuid,pid,process_name,used_memory --format=csv -l 1 > apps-loop-header.txt 2>&1
cat > loop.sh <<'SH'
export LC_ALL=C
rd() { v=-; { read -r v _ < "$1"; } 2>/dev/null; [ -n "$v" ] || v=-; }
# dmesg needs CAP_SYSLOG on Ubuntu (kernel.dmesg_restrict=1); the journal's kernel log is readable
# by the adm group. No sudo here: it would log a line to auth.log every few seconds.
if dmesg >/dev/null 2>&1; then dm() { dmesg; }; dmok=1
elif journalctl -k -q -n 1 >/dev/null 2>&1; then dm() { journalctl -k -q -o cat --no-pager -n 2000; }; dmok=1
else dm() { :; }; dmok=0; fi
i=0
while :; do
  rd /proc/uptime; printf 'B %s\n' "$v"
  devs=
  for p in /sys/class/net/*/device/infiniband/*; do
    [ -e "$p" ] || continue
    r=${p##*/}; d=${p%/device/infiniband/*}; n=${d##*/}
    :
    devs="$devs $n"
    rd "$d/operstate"; o=$v; rd "$d/speed"; s=$v
    rd "$d/statistics/tx_bytes"; t=$v; rd "$d/statistics/rx_bytes"; x=$v; rd "$d/statistics/rx_dropped"; q=$v
    printf 'N %s %s %s %s %s %s %s\n' "$n" "$r" "$o" "$s" "$t" "$x" "$q"
    c=/sys/class/infiniband/$r/ports/1
    rd "$c/counters/port_xmit_data"; t=$v; rd "$c/counters/port_rcv_data"; x=$v; rd "$c/hw_counters/out_of_buffer"; q=$v
    printf 'R %s %s %s %s\n' "$n" "$t" "$x" "$q"
  done
  if [ -n "$devs" ]; then
    for n in $devs; do printf 'E %s\n' "$n"; ethtool -S "$n" 2>/dev/null; done | grep -E '^E |(prio[0-7]_pause|rx_discards_phy|rx_out_of_buffer|vport_rdma_unicast_bytes):'
  fi
  if [ $((i % 5)) -eq 0 ]; then
    printf 'A\n'; nvidia-smi --query-compute-apps=gpu_uuid,pid,process_name,used_memory --format=csv,noheader,nounits 2>/dev/null; printf 'A.\n'
  fi
  if [ $((i % 2)) -eq 0 ]; then
    printf 'M\n'; curl -s -m 1 http://127.0.0.1:8000/metrics | grep -E '^(vllm:num_requests_running|vllm:num_requests_waiting|vllm:generation_tokens_total|vllm:prompt_tokens_total|vllm:kv_cache_usage_perc|vllm:gpu_cache_usage_perc|vllm:time_to_first_token_seconds_sum|vllm:time_to_first_token_seconds_count)[{ ]'; printf 'M.\n'
  fi
  if [ $((i % 10)) -eq 0 ]; then
    printf 'X\n'; dm 2>/dev/null | grep 'NVRM: Xid' | tail -n 5; printf 'X. %s\n' "$dmok"
  fi
  printf 'Z\n'
  i=$((i + 1))
  sleep 1.000
done

SH
timeout 4.5 bash loop.sh > hostloop-busy.txt 2> hostloop-busy.err
wait $LP
ls -la /sys/class/infiniband/ > sys-infiniband.txt 2>&1; ls /sys/class/net > sys-net.txt 2>&1
for d in /sys/class/net/*; do echo "$d $(readlink -f $d/device 2>/dev/null) $(ls $d/device/infiniband 2>/dev/null)"; done > sys-net-devices.txt
cat /proc/sys/kernel/dmesg_restrict > dmesg-restrict.txt 2>&1; id >> dmesg-restrict.txt
bash --version | head -1 > bash-version.txt
