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

static inline void vgpu_freep(void *p)
{
	free(*(void **)p);
}

static inline void vgpu_closep(int *fd)
{
	if (*fd >= 0)
		close(*fd);
}

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

static inline void *vgpu_steal_ptr_impl(void **p)
{
	void *r = *p;

	*p = NULL;
	return r;
}
#define vgpu_steal_ptr(pp) vgpu_steal_ptr_impl((void **)(pp))

#endif
