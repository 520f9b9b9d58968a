#!/bin/bash
# A Megatron-LM launch script in the style of the repository's own examples (flags kept in
# bash arrays, one per concern, expanded on the torchrun line; paths from the script's
# arguments), written for Paraplan's import test (tests/tst_launch.cpp,
# importReadsArrayStyleScripts). The model and layout are GPT-3 175B (Brown et al. 2020,
# Table 2.1) on 8 nodes of 8 GPUs with TP 8 and PP 8, as Korthikanti et al. 2022 ran it.
export CUDA_DEVICE_MAX_CONNECTIONS=1

GPUS=8
NODES=8
RANK_OF_NODE=${NODE_RANK:-0}
HEAD_NODE=${MASTER_ADDR:-localhost}
TOTAL=$(($GPUS*$NODES))   # not read: arithmetic

RUN_DIR=$1      # checkpoints and logs
CORPUS=$2       # a Megatron-indexed dataset prefix
TOKENIZER_DIR=$3

LAUNCH=(
    --nproc_per_node $GPUS
    --nnodes $NODES
    --node_rank $RANK_OF_NODE
    --master_addr $HEAD_NODE
    --master_port 6000
)

MODEL=(
    --num-layers 96          # GPT-3 175B
    --hidden-size 12288
    --num-attention-heads 96
    --seq-length 2048
    --max-position-embeddings 2048
)

PARALLEL=(
    --tensor-model-parallel-size 8
    --pipeline-model-parallel-size 8
)

TRAIN=(
    --micro-batch-size 1
    --global-batch-size 64
    --fp16
    --train-iters 500000
    --lr 6e-5 --min-lr 6e-6 --lr-decay-style cosine
    --lr-warmup-fraction 0.001
    --lr-decay-iters 430000
    --weight-decay 0.1
    --adam-beta1 0.9
    --adam-beta2 0.95
    --clip-grad 1.0
    --init-method-std 0.006
    --use-mcore-models
)

DATA=(
    --data-path "$CORPUS"
    --vocab-file "$TOKENIZER_DIR/gpt2-vocab.json"
    --merge-file "$TOKENIZER_DIR/gpt2-merges.txt"
    --split 949,50,1
)

LOGGING=(
    --save "$RUN_DIR/checkpoints" --load "$RUN_DIR/checkpoints"
    --save-interval 1000
    --log-interval 10
    --eval-interval 1000 --eval-iters 10
    --tensorboard-dir "$RUN_DIR/tensorboard"
)

torchrun ${LAUNCH[@]} pretrain_gpt.py \
    "${MODEL[@]}" \
    "${PARALLEL[@]}" \
    "${TRAIN[@]}" \
    ${DATA[@]} \
    ${LOGGING[@]}
