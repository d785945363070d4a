/* Fuzz target for lib/multiboot.c: mb_parse() over a memory window that is the input itself. */
#include "lib/multiboot.c"
#define FZ_PRINTK
#include "tests/fuzz/fakes.h"

#define PREFIX		"multiboot: "

static void check_success(const struct mb_boot_info *mb, const struct mb_window *w)
{
	struct frame_range usable[MB_MMAP_MAX], reserved[MB_RESERVED_MAX];
	uint64_t end = w->pa + w->size;

	FZ_CHECK(mb->mmap_count >= 1 && mb->mmap_count <= MB_MMAP_MAX, "%u", mb->mmap_count);
	FZ_CHECK(mb->used_count >= 1 && mb->used_count <= MB_USED_MAX, "%u", mb->used_count);
	FZ_CHECK(mb->mod_count <= MB_MODS_MAX, "%u", mb->mod_count);
	/* Modules are refused only past the limit, and then the limit's worth were taken. */
	FZ_CHECK(!mb->mods_refused || mb->mod_count == MB_MODS_MAX, "%u refused, %u taken",
		 mb->mods_refused, mb->mod_count);
	FZ_CHECK(fz_terminated(mb->cmdline, sizeof(mb->cmdline)), "cmdline");
	for (unsigned i = 0; i < mb->mmap_count; i++)
		FZ_CHECK(mb->mmap[i].length <= UINT64_MAX - mb->mmap[i].base, "mmap %u", i);
	for (unsigned i = 0; i < mb->used_count; i++)
		FZ_CHECK(mb->used[i].start >= w->pa && mb->used[i].start <= mb->used[i].end &&
			 mb->used[i].end <= end, "used %u", i);
	for (unsigned i = 0; i < mb->mod_count; i++) {
		const struct mb_module *m = &mb->mods[i];

		FZ_CHECK(m->start >= w->pa && m->start <= m->end && m->end <= end, "module %u", i);
		FZ_CHECK(m->start == m->end || m->end <= mb->image.start ||
			 m->start >= mb->image.end || mb->image.start >= mb->image.end,
			 "module %u overlaps the image", i);
		/* Empty, or where the loader put it, terminated inside the window. */
		FZ_CHECK(!m->string[0] ||
			 ((const uint8_t *)m->string >= w->base &&
			  (const uint8_t *)m->string + strlen(m->string) < w->base + w->size),
			 "module %u string", i);
		for (unsigned j = 0; j < i; j++)
			FZ_CHECK(m->start == m->end || mb->mods[j].start == mb->mods[j].end ||
				 m->end <= mb->mods[j].start || m->start >= mb->mods[j].end,
				 "modules %u and %u overlap", j, i);
	}
	FZ_CHECK(mb_usable_ranges(mb, usable) <= mb->mmap_count, "usable ranges");
	FZ_CHECK(mb_reserved_ranges(mb, reserved) == 1 + mb->mod_count + mb->used_count,
		 "reserved ranges");
}

/*
 * Input: window page (1 byte), info address, image start and end (4 bytes each), message buffer
 * size (1 byte); the rest is the window's contents, at physical page * 4096.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct mb_boot_info mb;
	struct fz in = { data, size };
	uint64_t pa = (uint64_t)fz_u8(&in) << 12;
	uint32_t info = fz_u32(&in), img_start = fz_u32(&in), img_end = fz_u32(&in);
	size_t msg_size = fz_u8(&in), len;
	char *msg = (char *)fz_block(msg_size);
	uint8_t *win = fz_bytes(&in, in.n, &len);
	const struct mb_window w = { win, pa, len };
	int r;

	r = mb_parse(&w, info, img_start, img_end, &mb, msg, msg_size);
	FZ_CHECK(r <= 0 && r >= MB_E_STRING, "result %d", r);
	FZ_CHECK(!msg_size || fz_terminated(msg, msg_size), "message not terminated");
	if (r == 0) {
		FZ_CHECK(!msg_size || !msg[0], "message on success: %s", msg);
		check_success(&mb, &w);
	} else if (msg_size > sizeof(PREFIX)) {
		FZ_CHECK(!strncmp(msg, PREFIX, sizeof(PREFIX) - 1), "message %s", msg);
	}
	fz_free(win, len);
	fz_free(msg, msg_size);
	return 0;
}
