/* Physical frame allocator: 4 KiB frames of usable RAM below 4 GiB, never a reserved one. */
#ifndef PERFVISOR_LIB_FRAME_H
#define PERFVISOR_LIB_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define FRAME_SIZE	4096ull

/* A physical range [start, end); start >= end is empty. */
struct frame_range {
	uint64_t start, end;
};

/* Negative returns of frame_init() and frame_free*(). */
enum {
	FRAME_E_NOMEM = -1,	/* init: no usable frame between 1 MiB and 4 GiB */
	FRAME_E_NOROOM = -2,	/* init: no free run of frames large enough for the bitmaps */
	FRAME_E_ALIGN = -3,	/* free: address not 4 KiB aligned */
	FRAME_E_RANGE = -4,	/* free: not a frame it hands out (reserved, hole, bitmap) */
	FRAME_E_DOUBLE = -5,	/* free: frame already free */
};

/*
 * (Re)initialise the one allocator. Frames wholly inside a usable range, at or above
 * 1 MiB and below 4 GiB, and not touching any reserved range are managed; everything
 * else never is. The bitmaps (2 bits per frame of the span) are carved out of usable
 * RAM and reached through p2v, which must map them contiguously; p2v also maps each
 * frame that is handed out, to zero it. Returns 0 or FRAME_E_NOMEM/NOROOM.
 */
int frame_init(const struct frame_range *usable, size_t nusable,
	       const struct frame_range *reserved, size_t nreserved,
	       void *(*p2v)(uint64_t pa));

/* One zeroed frame, the lowest free one; 0 when none is left (frame 0 is never managed). */
uint64_t frame_alloc(void);

/*
 * npages zeroed frames in a row, starting at a multiple of align_pages frames
 * (a power of two; 512 gives a 2 MiB page). Lowest fit first; 0 when there is none
 * or the arguments are 0 or align_pages is not a power of two.
 */
uint64_t frame_alloc_contig(uint64_t npages, uint64_t align_pages);

/* Return frames; nothing changes unless every frame is managed and allocated. */
int frame_free(uint64_t pa);
int frame_free_contig(uint64_t pa, uint64_t npages);

/* Managed frames in all, and free now. */
void frame_stats(uint64_t *total, uint64_t *free);

#endif
