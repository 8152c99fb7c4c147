"""Talking to a device: the serial console and validation, QEMU targets, bit-exact checks against the C library, benchmarks."""
