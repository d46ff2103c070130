#!/bin/bash
# Launch script of the tiny run (msprobe parses it for the static hyperparameters).
export HCCL_DETERMINISTIC=false
GPT_ARGS="
    --num-layers 2
    --hidden-size 8
    --lr 2e-4
    --bf16
    --weight-decay 0.1
"
torchrun --nproc_per_node 1 train.py $GPT_ARGS --seed 42 --micro-batch-size 2 --use-flash-attn
