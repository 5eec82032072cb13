"""The verdict engine both drivers call: monitors as folds (`folds`), the core trace rules as a fold
(`core_fold`), and the streaming router of the single-process driver (`stream`). Nothing is imported here:
import the module you need."""
