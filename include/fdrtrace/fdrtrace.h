/* SPDX-License-Identifier: MIT */
/*
 * fdrtrace/fdrtrace.h - the control API of libfdrtrace.
 * (placeholder: the runtime fills this in)
 */
#ifndef FDRTRACE_FDRTRACE_H
#define FDRTRACE_FDRTRACE_H
#endif
