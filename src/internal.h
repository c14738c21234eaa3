/*
 * internal.h: every internal header at once, for the layers that drive the
 * library's insides from above: the test suites and clprim_mpi. The library's
 * own files include just what they use (core/core.h, engine/<x>.h, and the
 * few family headers). Not installed.
 */
#ifndef CLPRIM_INTERNAL_H
#define CLPRIM_INTERNAL_H

#include "core/core.h"
#include "engine/count_scan_scatter.h"
#include "engine/lookback.h"
#include "engine/scan.h"
#include "histogram.h"
#include "engine/sample_select.h"
#include "engine/stages.h"
#include "reduce.h"
#include "scan.h"
#include "select.h"
#include "sort.h"
#include "topk.h"

#endif /* CLPRIM_INTERNAL_H */
