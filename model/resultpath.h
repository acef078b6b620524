/*
 * resultpath.h: facts about the result model (docs/result-format.md) that
 * more than one layer needs: the format name and version result.json
 * carries, and which of its paths are documented numeric or boolean
 * members an expectation (workload `expect:`) may name. The model is built
 * by harness/verdict.h and rendered by reports/.
 */
#ifndef LS_MODEL_RESULTPATH_H
#define LS_MODEL_RESULTPATH_H

#define RESULT_FORMAT "lockstorm-result"
#define RESULT_VERSION 1

/* Is path a documented result.json path an expectation may name?
 * (the contract paths of docs/result-format.md plus the documented extras). */
int result_path_valid(const char *path);

#endif
