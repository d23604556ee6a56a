# SPDX-License-Identifier: GPL-2.0
#
#   make               build the modules against KDIR
#   make demo          boot a guest, run the example client, show debugfs
#   make check         install what is missing and run every test
#   make check-quick   the quick tier: 6.12 generic only, no torture
#   make bench         benchmarks against workqueues at 1, 2 and 4 vCPUs
#   make deps          only install what is missing
#   make install       install blitz.ko (modules_install), and its headers
#                      and Module.symvers in /usr/src/blitz-<version>, for
#                      clients; DESTDIR= stages it elsewhere
#
# KDIR defaults to the running kernel's build tree; on a Debian machine
# without one, tools/deps.sh unpacks Debian's 6.12 headers and prints KDIR
# into $(BLITZ_WORK)/env.

KDIR ?= /lib/modules/$(shell uname -r)/build
VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"$$/\1/p' dkms.conf)
BLITZ_SRC = $(DESTDIR)/usr/src/blitz-$(VERSION)

all:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean

deps:
	tools/deps.sh

install:
	$(MAKE) -C $(KDIR) M=$(CURDIR) BLITZ_ONLY=1 modules
	$(MAKE) -C $(KDIR) M=$(CURDIR) BLITZ_ONLY=1 INSTALL_MOD_DIR=updates \
		INSTALL_MOD_PATH=$(DESTDIR) modules_install
	install -D -m 0644 -t $(BLITZ_SRC)/include/linux include/linux/blitz.h \
		include/linux/blitz_fork.h
	install -D -m 0644 Module.symvers $(BLITZ_SRC)/Module.symvers
	[ -n "$(DESTDIR)" ] || depmod -a $(shell cat $(KDIR)/include/config/kernel.release)

demo:
	tools/demo

check:
	tools/check

check-quick:
	tools/check --quick

bench:
	tools/bench

.PHONY: all clean deps install demo check check-quick bench
