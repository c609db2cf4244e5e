// The gentle sound at the end of a countdown: two soft sine notes through
// WebAudio. Browsers let a page make sound only after the person did
// something on it (a click, a key), so the chime is armed by the first
// such gesture and stays silent until then.

type AudioContextCtor = typeof AudioContext;

/** Chime plays the end-of-timer sound once armed by a gesture on the page. */
export class Chime {
  private ctx: AudioContext | null = null;
  private readonly disarm: () => void;

  constructor(target: Pick<Window, 'addEventListener' | 'removeEventListener'> = window, private readonly Ctor: AudioContextCtor | undefined = globalThis.AudioContext) {
    const arm = () => {
      if (!this.Ctor) return;
      try {
        this.ctx ??= new this.Ctor();
        void this.ctx.resume();
      } catch {
        // No sound on this device: the visual cue stays.
      }
    };
    const events = ['pointerdown', 'keydown'] as const;
    for (const e of events) target.addEventListener(e, arm, { capture: true, passive: true });
    this.disarm = () => {
      for (const e of events) target.removeEventListener(e, arm, { capture: true });
    };
  }

  /** play sounds the chime; false when it cannot (no gesture yet, no audio). */
  play(): boolean {
    const ctx = this.ctx;
    if (!ctx || ctx.state !== 'running') return false;
    const t = ctx.currentTime;
    for (const [i, freq] of [660, 880].entries()) {
      const osc = ctx.createOscillator();
      const gain = ctx.createGain();
      osc.type = 'sine';
      osc.frequency.value = freq;
      const start = t + i * 0.22;
      gain.gain.setValueAtTime(0.0001, start);
      gain.gain.exponentialRampToValueAtTime(0.12, start + 0.03);
      gain.gain.exponentialRampToValueAtTime(0.0001, start + 0.6);
      osc.connect(gain).connect(ctx.destination);
      osc.start(start);
      osc.stop(start + 0.65);
    }
    return true;
  }

  /** close stops listening and lets the audio go. */
  close(): void {
    this.disarm();
    void this.ctx?.close().catch(() => {});
    this.ctx = null;
  }
}
