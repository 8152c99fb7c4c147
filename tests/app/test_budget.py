"""Build-time memory budget: the nucleo_h743zi FreeRTOS build with the default English model
prints its flash and static RAM use and fits 1.25 MB flash / 128 KB RAM; a build over its budget fails
with a message that says what to lower."""
from __future__ import annotations

import json

from apphelpers import require_arm, require_modules, west

FLASH_BUDGET, RAM_BUDGET = 1_310_720, 131_072   # 1.25 MB, 128 KB (the seed's RAM budget)


def test_nucleo_freertos_default_model_fits_the_budget(tmp_path):
    require_arm()
    require_modules("rtos/FreeRTOS-Kernel", "hal/stm32h7xx_hal_driver", "hal/cmsis_device_h7", "hal/CMSIS_6")
    b = tmp_path / "nucleo"
    proc = west("build", "-b", "nucleo_h743zi", "-p", "-d", str(b), "app", "--", "-DCONFIG_APP_RTOS_FREERTOS=y")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "memory budget (nucleo_h743zi):" in proc.stdout
    budget = json.loads((b / "memory_budget.json").read_text())
    assert budget["flash_budget"] == FLASH_BUDGET and budget["ram_budget"] == RAM_BUDGET and budget["ok"]
    assert 0 < budget["flash"] <= FLASH_BUDGET and 0 < budget["ram"] <= RAM_BUDGET
    printed = " ".join(proc.stdout.split())
    assert f"flash {budget['flash']:,} B of {FLASH_BUDGET:,} B" in printed
    assert f"static RAM {budget['ram']:,} B of {RAM_BUDGET:,} B" in printed
    # the work buffer is in DTCM and counted; the weights are in flash
    manifest = json.loads((b / "generated" / "model" / "manifest.json").read_text())
    assert budget["ram_sections"][".dtcmram"] >= manifest["work_buffer_bytes"]
    assert budget["flash"] > manifest["flash_bytes"]["total"]
    assert "CONFIG_APP_RTOS_FREERTOS=y" in (b / ".config").read_text()
    print(f"nucleo_h743zi FreeRTOS intent-en: flash {budget['flash']} B, static RAM {budget['ram']} B "
          f"{budget['ram_sections']}")


def test_over_budget_build_fails_and_says_what_to_lower(tmp_path):
    require_arm()
    b = tmp_path / "tight"
    proc = west("build", "-b", "mps2_an500", "-p", "-d", str(b), "app", "--", "-DCONFIG_APP_RTOS_NONE=y",
                "-DCONFIG_APP_RAM_BUDGET=16384")
    assert proc.returncode != 0
    assert "memory budget exceeded: static RAM" in proc.stderr + proc.stdout
    assert "CONFIG_BERTL14_MAX_SEQ_LEN" in proc.stderr + proc.stdout
    assert not (b / "firmware.elf").exists()          # the next build tries again
