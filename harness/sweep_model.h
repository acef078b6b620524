/*
 * sweep_model.h: assembling sweep.json (docs/sweep.md "sweep.json"), the
 * TTL-tuning model of `lockstorm sweep`, from the sweep's plan (what ran:
 * axes, cells, states, written by harness/sweep_run.c) and the cells' run
 * directories (result.json and the event logs). The arithmetic of the
 * predicted curves is checkers/ttl.h; reports/sweep.h renders the model.
 */
#ifndef LS_HARNESS_SWEEP_MODEL_H
#define LS_HARNESS_SWEEP_MODEL_H

#include "util/json.h"

/* Contract: completes plan (a sweep.json document as harness/sweep_run.c
 * writes it: header, axes, cells with their states) in place from the
 * cells' run directories under dir: each done cell gets "measured", and
 * the document gets "series" (one per combination of the axes other than
 * lock.ttl: points per TTL, the predicted curves, the smallest safe TTL),
 * "recommendation", "price" and "warnings". Members it adds are replaced
 * when present, so a finished sweep.json can be assembled again. */
void sweep_model_build(const char *dir, struct json *plan);

#endif
