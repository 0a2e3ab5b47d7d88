# The two commands a newcomer needs (see README.md):
#   make demo   set up, build, and compare strategies on the bundled sample
#   make test   set up, build, and run the whole test suite
BUILD ?= build
MESON_OPTS ?= -Db_lto=true
SAMPLE ?= samples/train-step.jsonl

.PHONY: all deps build demo test sanitize clean

all: build

deps:
	@tools/deps.sh

$(BUILD)/build.ninja:
	meson setup $(BUILD) $(MESON_OPTS)

build: deps $(BUILD)/build.ninja
	ninja -C $(BUILD)

demo: build
	$(BUILD)/cli/memlens stats $(SAMPLE)
	@echo
	$(BUILD)/cli/memlens compare $(SAMPLE) --strategies all
	$(BUILD)/cli/memlens report $(SAMPLE) --strategies all -o $(BUILD)/demo-report.html

test: build
	meson test -C $(BUILD) --print-errorlogs --num-processes 2

sanitize: deps
	[ -f build-san/build.ninja ] || meson setup build-san -Dsanitize=true
	ninja -C build-san
	meson test -C build-san --print-errorlogs --num-processes 2

clean:
	rm -rf $(BUILD) build-san build-nocuda build-core
