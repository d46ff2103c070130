# Sourced by the page benches: the TensorBoard a bench starts (its pid in
# tb_pid) and stop_board, which stops it if it still runs.
tb_pid=""
stop_board() {
  if [ -n "$tb_pid" ] && kill -0 "$tb_pid" 2>/dev/null; then
    kill "$tb_pid" 2>/dev/null || true
    wait "$tb_pid" 2>/dev/null || true
  fi
  tb_pid=""
}
