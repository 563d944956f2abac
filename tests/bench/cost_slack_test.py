#!/usr/bin/env python3
"""boot/tools/cost's judgement of two runs on the shared-memory link that
differ: within SHM_SLACK instructions in node 0's or node 1's
fabric_rx>mech_rx alone passes; more, another step, a step beside it, or
another path fails.  Prints "cost-slack: N checks passed" or fails with
the first check that did not hold."""

import os
import sys
from importlib.machinery import SourceFileLoader
from importlib.util import module_from_spec, spec_from_loader

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
loader = SourceFileLoader("cost_tool", os.path.join(ROOT, "boot", "tools", "cost"))
cost = module_from_spec(spec_from_loader("cost_tool", loader))
loader.exec_module(cost)

checks = 0


def check(what, lo, hi, moved, want):
    global checks
    got = bool(cost.shm_slack({"range": [lo, hi], "moved": moved}))
    if got != want:
        print("cost-slack: %s: got %r, want %r" % (what, got, want))
        sys.exit(1)
    checks += 1


step = cost.SHM_SLACK_STEP
check("one instruction in the answer's receive", 2000, 2001, ["n0 %s 196-197" % step], True)
check("the most it allows", 864, 864 + cost.SHM_SLACK, ["n0 %s 864-%d" % (step, 864 + cost.SHM_SLACK)], True)
check("one more than it allows", 864, 865 + cost.SHM_SLACK,
      ["n0 %s 864-%d" % (step, 865 + cost.SHM_SLACK)], False)
check("another step", 5008, 5009, ["n1 rx_done>mech_send 636-637"], False)
check("the step and another beside it", 2000, 2001, ["n0 %s 196-197" % step, "n1 rx_done>mech_send 1-2"], False)
check("another path", 2000, 2001, ["n0's path took another turn (%s 5 in the dearest run)" % step], False)
check("nothing said to have moved", 2000, 2001, [], False)
print("cost-slack: %d checks passed" % checks)
