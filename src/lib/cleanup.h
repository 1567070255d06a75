/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Scope-bound cleanup helpers (GCC/Clang cleanup attribute).  Every variable
 * declared with one of these must be initialised at its declaration.
 */
#ifndef VGPU_CLEANUP_H
#define VGPU_CLEANUP_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/**
 * vgpu_freep() - free() the pointer @p points to; the cleanup of VGPU_AUTOFREE.
 * @p: the address of a heap pointer (NULL inside is fine)
 */
static inline void vgpu_freep(void *p)
{
	free(*(void **)p);
}

/**
 * vgpu_closep() - close() *@fd unless it is negative; the cleanup of VGPU_AUTOCLOSE.
 * @fd: the address of a file descriptor, -1 for none
 */
static inline void vgpu_closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}

/**
 * vgpu_fclosep() - fclose() *@f unless NULL; the cleanup of VGPU_AUTOFCLOSE.
 * @f: the address of a stream pointer
 */
static inline void vgpu_fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

#define VGPU_AUTOFREE __attribute__((cleanup(vgpu_freep)))
#define VGPU_AUTOCLOSE __attribute__((cleanup(vgpu_closep)))
#define VGPU_AUTOFCLOSE __attribute__((cleanup(vgpu_fclosep)))

/*
 * VGPU_DEFINE_AUTOPTR(name, type, freefn) once per type, then
 * VGPU_AUTOPTR(name) p = NULL;  declares a `type *` freed at scope exit.
 */
#define VGPU_DEFINE_AUTOPTR(name, type, freefn)                                                    \
	static inline void vgpu_autoptr_##name(type **p)                                           \
	{                                                                                          \
		if (*p)                                                                            \
			freefn(*p);                                                                \
	}                                                                                          \
	typedef type vgpu_autoptr_type_##name;
#define VGPU_AUTOPTR(name) __attribute__((cleanup(vgpu_autoptr_##name))) vgpu_autoptr_type_##name *

/**
 * vgpu_steal_ptr_impl() - take the pointer out of *@p, leaving NULL, so a
 * cleanup attribute on *@p frees nothing; called as vgpu_steal_ptr(&ptr).
 * @p: the address of the pointer
 * Return: the pointer *@p held; the caller owns it now.
 */
static inline void *vgpu_steal_ptr_impl(void **p)
{
	void *r = *p;

	*p = NULL;
	return r;
}
#define vgpu_steal_ptr(pp) vgpu_steal_ptr_impl((void **)(pp))

#endif
