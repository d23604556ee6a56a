# SPDX-License-Identifier: GPL-2.0
#
#   make               build the modules against KDIR
#   make demo          boot a guest, run the example client, show debugfs
#   make check         install what is missing and run every test
#   make bench         benchmarks against workqueues at 1, 2 and 4 vCPUs
#   make deps          only install what is missing
#
# KDIR defaults to the running kernel's build tree; on a Debian machine
# without one, tools/deps.sh unpacks Debian's 6.12 headers and prints KDIR
# into $(BLITZ_WORK)/env.

KDIR ?= /lib/modules/$(shell uname -r)/build

all:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean

deps:
	tools/deps.sh

demo:
	tools/demo

check:
	tools/check

bench:
	tools/bench

.PHONY: all clean deps demo check bench
