#!/usr/bin/env python3
"""Measures a turn's latency across two gateways of a running cluster.

Device A on one gateway sends `message.send`; device B (same account) on another gateway
records when the first `message.update` and the final `agent.idle` arrive. Prints p50/p99.

Usage (with `./deploy/local/up.sh` running, ideally with IRIS_ECHO_DELAY_MS=0 on the worker):
    pip install websockets
    python3 scripts/bench/turn_latency.py --token <token> [--turns 200]
"""
import argparse
import asyncio
import json
import time

import websockets


def percentile(samples, fraction):
    ordered = sorted(samples)
    return ordered[max(0, int(len(ordered) * fraction) - 1)] * 1000


async def pair(url, token, device):
    ws = await websockets.connect(url, max_size=None)
    await ws.send(json.dumps({"v": 1, "id": 1, "type": "hello", "payload": {"token": token, "device_id": device}}))
    ack = json.loads(await ws.recv())
    await ws.send(json.dumps({"v": 1, "id": 2, "type": "sync", "payload": {"cursor": ack["payload"]["sync_cursor"]}}))
    while json.loads(await ws.recv())["type"] != "sync.done":
        pass
    return ws


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--token", required=True)
    parser.add_argument("--sender", default="ws://127.0.0.1:8080/ws")
    parser.add_argument("--receiver", default="ws://127.0.0.1:8081/ws")
    parser.add_argument("--turns", type=int, default=200)
    args = parser.parse_args()
    sender = await pair(args.sender, args.token, "bench-sender")
    receiver = await pair(args.receiver, args.token, "bench-receiver")
    first_update, idle = [], []
    for turn in range(args.turns):
        started = time.perf_counter()
        await sender.send(json.dumps({"v": 1, "id": 10 + turn, "type": "message.send", "payload": {"text": f"bench {turn}"}}))
        seen_update = None
        while True:
            frame = json.loads(await receiver.recv())
            if frame["type"] == "message.update" and seen_update is None:
                seen_update = time.perf_counter() - started
            if frame["type"] == "agent.idle":
                break
        idle.append(time.perf_counter() - started)
        first_update.append(seen_update)
        while json.loads(await sender.recv())["type"] != "agent.idle":
            pass
    print(f"turns: {args.turns}")
    print(f"send -> first message.update on the other device: p50 {percentile(first_update, .5):.2f} ms, p99 {percentile(first_update, .99):.2f} ms")
    print(f"send -> agent.idle on the other device:          p50 {percentile(idle, .5):.2f} ms, p99 {percentile(idle, .99):.2f} ms")


asyncio.run(main())
