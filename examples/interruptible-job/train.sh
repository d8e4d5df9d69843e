#!/bin/sh
# A small training loop: one step a minute, its step counter checkpointed every CHECKPOINT_EVERY steps on the
# checkpoint volume ($CHECKPOINT_DIR), from which it resumes after an outbid. Every step done is logged there too
# (steps.log), so what was redone after each outbid can be counted.
set -eu
steps=${STEPS:-360}
every=${CHECKPOINT_EVERY:-10}
ckpt="$CHECKPOINT_DIR/step"
step=$(cat "$ckpt" 2>/dev/null || echo 0)
echo "resume $step $(date +%s)" >> "$CHECKPOINT_DIR/steps.log"
while [ "$step" -lt "$steps" ]; do
  sleep "${STEP_SECONDS:-60}"          # one training step
  step=$((step + 1))
  echo "step $step" >> "$CHECKPOINT_DIR/steps.log"
  if [ $((step % every)) -eq 0 ] || [ "$step" -eq "$steps" ]; then
    echo "$step" > "$ckpt.new" && mv "$ckpt.new" "$ckpt"   # atomic: an outbid mid-write leaves the last checkpoint whole
  fi
done
echo "done: $step steps"
