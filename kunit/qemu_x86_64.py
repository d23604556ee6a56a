# SPDX-License-Identifier: GPL-2.0
#
# kunit.py --qemu_config for the x86_64 run: as tools/testing/kunit/
# qemu_configs/x86_64.py, but with explicit multi-threaded TCG (there is no
# KVM here) and a CPU model with every feature TCG emulates. kunit/run adds
# -smp through --qemu_args.

from ..qemu_config import QemuArchParams

QEMU_ARCH = QemuArchParams(linux_arch='x86_64',
			   kconfig='''
CONFIG_SERIAL_8250=y
CONFIG_SERIAL_8250_CONSOLE=y''',
			   qemu_arch='x86_64',
			   kernel_path='arch/x86/boot/bzImage',
			   kernel_command_line='console=ttyS0',
			   extra_qemu_params=['-bios', 'qboot.rom',
					      '-accel', 'tcg,thread=multi',
					      '-cpu', 'max'])
