/* Threads and the scheduler: per-VCPU run queues, round robin, preemption, migration, join. */
#include <stdlib.h>
#include <string.h>

#include "guest-stub/kernel/internal.h"
#include "guest-stub/rt/rt.h"

#define KSTACK_SIZE	0x4000
#define USTACK_SIZE	0x4000
#define FXSAVE_FCW	0	/* offsets in the FXSAVE image (SDM Vol. 1, "FXSAVE") */
#define FXSAVE_MXCSR	24
#define FCW_DEFAULT	0x037F	/* the values FNINIT and reset give */
#define MXCSR_DEFAULT	0x1F80

struct kcpu kcpus[KCPU_MAX];
unsigned kcpu_count = 1;

static bool migrate_random;
static unsigned next_cpu;			/* where KTHREAD_ANY_CPU threads start */
static uint32_t next_tid;
static struct rt_spinlock join_lock;		/* state changes to KT_ZOMBIE and joiner */
static const struct kthread_hooks *hooks;

unsigned kernel_ncpus(void)
{
	return kcpu_count;
}

unsigned kcpu_id(void)
{
	return this_cpu()->id;
}

struct kthread_uinfo *kthread_info(struct kthread *t)
{
	return &t->info;
}

void kthread_set_hooks(const struct kthread_hooks *h)
{
	hooks = h;
}

/* The hook pair around every switch: the PMU driver saves and restores thread state here. */
static void kthread_switch_out(struct kthread *prev)
{
	if (hooks && hooks->switch_out)
		hooks->switch_out(prev);
}

static void kthread_switch_in(struct kthread *next)
{
	if (hooks && hooks->switch_in)
		hooks->switch_in(next);
}

void kthread_trap_enter(void)
{
	if (hooks && hooks->trap_enter)
		hooks->trap_enter(this_cpu()->current);
}

void kthread_trap_leave(void)
{
	if (hooks && hooks->trap_leave)
		hooks->trap_leave(this_cpu()->current);
}

/* Run queues: FIFO lists, each behind its own lock, taken with interrupts masked. */
static void rq_push(struct kcpu *c, struct kthread *t)
{
	rt_spin_lock(&c->rq_lock);
	t->state = KT_READY;
	t->cpu = c->id;
	t->next = NULL;
	if (c->rq_tail)
		c->rq_tail->next = t;
	else
		c->rq_head = t;
	c->rq_tail = t;
	rt_spin_unlock(&c->rq_lock);
}

static struct kthread *rq_pop(struct kcpu *c)
{
	struct kthread *t;

	rt_spin_lock(&c->rq_lock);
	t = c->rq_head;
	if (t) {
		c->rq_head = t->next;
		if (!c->rq_head)
			c->rq_tail = NULL;
	}
	rt_spin_unlock(&c->rq_lock);
	return t;
}

/* xorshift64 (Marsaglia 2003): a reproducible sequence per VCPU from the seed. */
static uint64_t rng_next(struct kcpu *c)
{
	c->rng ^= c->rng << 13;
	c->rng ^= c->rng >> 7;
	c->rng ^= c->rng << 17;
	return c->rng;
}

/* With migrate=random, half the preempted threads go to another VCPU's queue, at random. */
static struct kcpu *preempt_target(struct kcpu *c, struct kthread *t)
{
	uint64_t r;

	if (!migrate_random || t->pinned || kcpu_count < 2)
		return c;
	r = rng_next(c);
	if (r & 1)
		return c;
	return &kcpus[(c->id + 1 + (r >> 1) % (kcpu_count - 1)) % kcpu_count];
}

/*
 * Picks the next thread of this VCPU and switches to it; interrupts are masked. The caller
 * has decided what becomes of the current thread: KT_REQUEUE with cpu set to the VCPU whose
 * queue it joins, KT_BLOCKED or KT_ZOMBIE (the idle thread just stays KT_RUNNING). The
 * idle thread runs when there is nothing else. Returns when the caller's thread runs
 * again, maybe on another VCPU.
 */
static void schedule(void)
{
	struct kcpu *c = this_cpu();
	struct kthread *prev = c->current, *next = rq_pop(c);

	if (!next)
		next = prev->state == KT_REQUEUE && prev->cpu == c->id ? prev : c->idle;
	if (next == prev) {
		prev->state = KT_RUNNING;
		return;
	}
	next->state = KT_RUNNING;
	next->cpu = c->id;
	next->on_cpu = true;
	next->info.smp_id = c->id;
	next->info.vcpu_mask |= 1ull << c->id;
	next->info.resumes++;
	/* Where the CPU puts the stack when a user thread enters the kernel. */
	c->tss.rsp[0] = next->kstack_top;
	c->current = next;
	kthread_switch_out(prev);
	kthread_switch_in(next);
	kswitch(prev, &prev->ksp, next->ksp);
}

/*
 * Called by kswitch on next's stack, once prev's is free. Only now may prev join a run
 * queue: another VCPU could pop it at once and must not find its stack still in use.
 */
void sched_switched(struct kthread *prev)
{
	prev->on_cpu = false;
	if (prev->state == KT_REQUEUE)
		rq_push(&kcpus[prev->cpu], prev);
}

/* The current thread gives up the VCPU for the back of target's queue. */
static void preempt(struct kcpu *target)
{
	struct kcpu *c = this_cpu();

	/* The idle thread is never queued: it runs whenever the queue is empty. */
	if (c->current != c->idle) {
		c->current->state = KT_REQUEUE;
		c->current->cpu = target->id;
	}
	schedule();
}

/* The timer interrupt: the current thread's slice is over. */
void sched_tick(void)
{
	struct kcpu *c = this_cpu();

	c->current->info.ticks++;
	preempt(preempt_target(c, c->current));
}

void kthread_yield(void)
{
	uint64_t flags = rt_irq_save();

	preempt(this_cpu());
	rt_irq_restore(flags);
}

bool kthread_move(uint64_t cpu)
{
	uint64_t flags;

	if (cpu >= kcpu_count)
		return false;
	flags = rt_irq_save();
	preempt(&kcpus[cpu]);
	rt_irq_restore(flags);
	return true;
}

/*
 * A blocked thread goes back to the queue of its VCPU, which alone pops that queue: if the
 * thread is still on its way out there, that VCPU pops it only after it has left (or
 * finds it was prev, and keeps it running). KT_READY tells sched_switched it is queued.
 */
static void wake(struct kthread *t)
{
	rq_push(&kcpus[t->cpu], t);
}

void kthread_exit(int code)
{
	struct kthread *self;
	struct kthread *joiner;

	rt_irq_save();
	self = this_cpu()->current;
	rt_spin_lock(&join_lock);
	self->exit_code = code;
	self->state = KT_ZOMBIE;
	joiner = self->joiner;
	rt_spin_unlock(&join_lock);
	if (joiner)
		wake(joiner);
	schedule();
	__builtin_unreachable();	/* a zombie is never queued again */
}

int kthread_join(struct kthread *t)
{
	uint64_t flags = rt_irq_save();
	struct kthread *self = this_cpu()->current;
	int code;

	rt_spin_lock(&join_lock);
	if (t->state != KT_ZOMBIE) {
		/* Under join_lock, so kthread_exit() sees the joiner or we see the zombie. */
		t->joiner = self;
		self->state = KT_BLOCKED;
		rt_spin_unlock(&join_lock);
		schedule();
	} else {
		rt_spin_unlock(&join_lock);
	}
	rt_irq_restore(flags);
	/* It may still be on its way out of kswitch on another VCPU, on the stack freed below. */
	while (t->on_cpu)
		cpu_relax();
	code = t->exit_code;
	free(t->pmu);
	free(t->kstack);
	free(t->ustack);
	free(t);
	return code;
}

/* Where kernel threads start, at CPL 0. */
static void kthread_start(int (*fn)(void *), void *arg)
{
	kthread_exit(fn(arg));
}

/* Where user threads start, at CPL 3: the function runs in user mode too. */
static void uthread_start(int (*fn)(void *), void *arg)
{
	sys_exit(fn(arg));
}

/*
 * A new thread's kernel stack looks like that of a thread that was switched out inside an
 * interrupt at the first instruction of its start function: on top a struct kframe with
 * RIP, CS, SS, RSP and RFLAGS.IF of that moment and fn, arg in RDI, RSI; below it what
 * kswitch pops, returning to kintr_return. The first switch-in then "returns from the
 * interrupt" into the thread, in its ring, with the default x87/SSE state.
 */
static struct kthread *thread_alloc(int (*fn)(void *), void *arg, bool user)
{
	struct kthread *t = calloc(1, sizeof(*t));
	struct kframe *f;
	uint64_t *sp;

	if (!t)
		return NULL;
	t->kstack = malloc(KSTACK_SIZE);
	t->ustack = user ? malloc(USTACK_SIZE) : NULL;
	if (!t->kstack || (user && !t->ustack)) {
		free(t->kstack);
		free(t);
		return NULL;
	}
	t->info.tid = __atomic_fetch_add(&next_tid, 1, __ATOMIC_RELAXED);
	/* malloc aligns to 16 bytes and the sizes are multiples of 16: so are the tops. */
	t->kstack_top = (uintptr_t)t->kstack + KSTACK_SIZE;

	f = (struct kframe *)t->kstack_top - 1;
	memset(f, 0, sizeof(*f));
	*(uint16_t *)&f->fpu[FXSAVE_FCW] = FCW_DEFAULT;
	*(uint32_t *)&f->fpu[FXSAVE_MXCSR] = MXCSR_DEFAULT;
	f->rdi = (uintptr_t)fn;
	f->rsi = (uintptr_t)arg;
	f->rflags = RT_RFLAGS_IF | RFLAGS_RESERVED;
	/* RSP as after a CALL (the ABI's alignment); the start functions never return. */
	if (user) {
		f->rip = (uintptr_t)uthread_start;
		f->cs = SEL_UCODE;
		f->ss = SEL_UDATA;
		f->rsp = (uintptr_t)t->ustack + USTACK_SIZE - 8;
	} else {
		f->rip = (uintptr_t)kthread_start;
		f->cs = SEL_KCODE;
		f->ss = SEL_KDATA;
		f->rsp = t->kstack_top - 8;
	}
	sp = (uint64_t *)f;
	*--sp = (uintptr_t)kintr_return;
	for (int i = 0; i < 6; i++)	/* RBP, RBX, R12-R15 */
		*--sp = 0;
	t->ksp = (uintptr_t)sp;
	return t;
}

struct kthread *kthread_create(int (*fn)(void *), void *arg, enum kthread_ring ring, int cpu)
{
	struct kthread *t;
	uint64_t flags;

	if (cpu != KTHREAD_ANY_CPU && (cpu < 0 || (unsigned)cpu >= kcpu_count))
		return NULL;
	t = thread_alloc(fn, arg, ring == KTHREAD_USER);
	if (!t)
		return NULL;
	if (cpu == KTHREAD_ANY_CPU)
		cpu = (int)(__atomic_fetch_add(&next_cpu, 1, __ATOMIC_RELAXED) % kcpu_count);
	else
		t->pinned = true;
	flags = rt_irq_save();
	rq_push(&kcpus[cpu], t);
	rt_irq_restore(flags);
	return t;
}

static __attribute__((noreturn)) int idle_main(void *arg)
{
	(void)arg;
	/* STI's one-instruction delay: no interrupt slips in between STI and HLT. */
	for (;;)
		__asm__ volatile("sti; hlt" : : : "memory");
}

/* Makes the code running now on VCPU c its current thread self. */
static void adopt(struct kcpu *c, struct kthread *self)
{
	self->state = KT_RUNNING;
	self->on_cpu = true;
	self->cpu = c->id;
	self->info.smp_id = c->id;
	self->info.vcpu_mask = 1ull << c->id;
	self->info.resumes = 1;
	c->current = self;
}

/*
 * On the BSP, before the APs start: every VCPU gets an idle thread and a random sequence
 * of its own, and the code that called kernel_init() becomes the thread "main".
 */
bool sched_init(bool migrate, uint64_t seed)
{
	static struct kthread main_thread;

	migrate_random = migrate;
	for (unsigned i = 0; i < kcpu_count; i++) {
		kcpus[i].idle = thread_alloc(idle_main, NULL, false);
		if (!kcpus[i].idle)
			return false;
		/* xorshift needs a non-zero state; odd multipliers keep VCPUs apart. */
		kcpus[i].rng = (seed + 1) * 0x9E3779B97F4A7C15ull + i * 0xBF58476D1CE4E5B9ull;
		if (!kcpus[i].rng)
			kcpus[i].rng = 1;
	}
	main_thread.info.tid = __atomic_fetch_add(&next_tid, 1, __ATOMIC_RELAXED);
	adopt(&kcpus[0], &main_thread);
	return true;
}

/* On an AP, on its idle thread's stack: become that thread and wait for work. */
void sched_run_idle(struct kcpu *c)
{
	adopt(c, c->idle);
	idle_main(NULL);
	__builtin_unreachable();
}
