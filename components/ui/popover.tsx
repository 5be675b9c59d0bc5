"use client";

import { useCallback, useEffect, useLayoutEffect, useRef, useState, type KeyboardEvent as ReactKeyboardEvent, type ReactNode } from "react";
import { createPortal } from "react-dom";
import { useAccess } from "@/components/caller-context";
import type { Role } from "@/lib/auth/roles";
import { cn } from "./cn";

type Position = { top: number; left: number };

/**
 * A floating panel anchored to an element, in a portal so that scroll containers never clip it.
 * Closes on Escape (focus goes back to the anchor) and on a click outside; follows its anchor when
 * the page scrolls, and closes when the anchor scrolls out of sight.
 */
export function Popover({
  anchor,
  onClose,
  children,
  label,
  role = "dialog",
  className,
  align = "start",
  onKeyDown,
}: {
  anchor: HTMLElement;
  onClose: () => void;
  children: ReactNode;
  label: string;
  role?: "dialog" | "menu";
  className?: string;
  align?: "start" | "end";
  onKeyDown?: (e: ReactKeyboardEvent<HTMLDivElement>) => void;
}) {
  const panel = useRef<HTMLDivElement>(null);
  const [pos, setPos] = useState<Position | null>(null);

  const place = useCallback(() => {
    const a = anchor.getBoundingClientRect();
    const p = panel.current?.getBoundingClientRect();
    const width = p?.width ?? 0;
    const height = p?.height ?? 0;
    let left = align === "end" ? a.right - width : a.left;
    left = Math.max(8, Math.min(left, window.innerWidth - width - 8));
    // Below the anchor; above it when there is no room below; else as low as still fits on screen.
    const below = a.bottom + 4;
    const fitsBelow = below + height <= window.innerHeight - 8;
    const fitsAbove = a.top - height - 4 >= 8;
    const top = fitsBelow ? below : fitsAbove ? a.top - height - 4 : Math.max(8, window.innerHeight - height - 8);
    setPos((prev) => (prev && prev.top === top && prev.left === left ? prev : { top, left }));
  }, [anchor, align]);

  // Measuring needs the panel rendered first, hence a layout effect.
  useLayoutEffect(place, [place]);

  const placed = pos !== null;
  useEffect(() => {
    // Keyboard users land inside: on the first item of a menu, on the panel of a dialog.
    if (!placed) return;
    const first = role === "menu" ? panel.current?.querySelector<HTMLElement>("[role=menuitem]") : panel.current;
    first?.focus();
  }, [placed, role]);

  useEffect(() => {
    const onPointer = (e: MouseEvent) => {
      const target = e.target as Node;
      if (panel.current?.contains(target) || anchor.contains(target)) return;
      onClose();
    };
    // Scrolling moves the anchor: follow it, and close once it is gone (a virtualised row unmounts).
    const onScroll = (e: Event) => {
      if (panel.current?.contains(e.target as Node)) return;
      const a = anchor.getBoundingClientRect();
      if (!anchor.isConnected || a.bottom < 0 || a.top > window.innerHeight) onClose();
      else place();
    };
    // Capture on window: Escape closes this popover only, not also a side panel listening below it.
    const onEscape = (e: KeyboardEvent) => {
      if (e.key !== "Escape") return;
      e.stopPropagation();
      onClose();
      anchor.focus();
    };
    document.addEventListener("mousedown", onPointer);
    window.addEventListener("keydown", onEscape, true);
    window.addEventListener("scroll", onScroll, true);
    window.addEventListener("resize", place);
    return () => {
      document.removeEventListener("mousedown", onPointer);
      window.removeEventListener("keydown", onEscape, true);
      window.removeEventListener("scroll", onScroll, true);
      window.removeEventListener("resize", place);
    };
  }, [anchor, onClose, place]);

  return createPortal(
    <div
      ref={panel}
      role={role}
      tabIndex={-1}
      aria-label={label}
      onKeyDown={onKeyDown}
      style={pos ? { top: pos.top, left: pos.left } : { top: -9999, left: -9999 }}
      className={cn("fixed z-50 rounded-lg border focus:outline-none border-slate-200 bg-white shadow-lg ring-1 ring-black/5", className)}
    >
      {children}
    </div>,
    document.body,
  );
}

/** A trigger button with a menu of actions; arrow keys move between items, Escape closes. */
export function Menu({
  label,
  trigger,
  triggerClassName,
  children,
  align = "start",
  needs,
}: {
  label: string;
  trigger: ReactNode;
  triggerClassName?: string;
  children: (close: () => void) => ReactNode;
  align?: "start" | "end";
  /** The role the menu's actions need: without it the trigger is disabled, its title saying why. */
  needs?: Role;
}) {
  const access = useAccess(needs ?? "viewer");
  const refused = needs !== undefined && !access.allowed;
  const [anchor, setAnchor] = useState<HTMLButtonElement | null>(null);
  const button = useRef<HTMLButtonElement>(null);
  const close = useCallback(() => setAnchor(null), []);

  function moveFocus(e: ReactKeyboardEvent<HTMLDivElement>) {
    if (e.key !== "ArrowDown" && e.key !== "ArrowUp" && e.key !== "Home" && e.key !== "End") return;
    e.preventDefault();
    const items = [...e.currentTarget.querySelectorAll<HTMLElement>("[role=menuitem]:not([aria-disabled=true])")];
    const i = items.indexOf(document.activeElement as HTMLElement);
    const next =
      e.key === "Home" ? 0 : e.key === "End" ? items.length - 1 : e.key === "ArrowDown" ? (i + 1) % items.length : (i - 1 + items.length) % items.length;
    items[next]?.focus();
  }

  return (
    <>
      <button
        ref={button}
        type="button"
        aria-label={label}
        aria-haspopup="menu"
        aria-expanded={anchor !== null}
        className={triggerClassName}
        disabled={refused}
        title={refused ? access.why : undefined}
        onClick={(e) => {
          e.stopPropagation();
          setAnchor(anchor ? null : button.current);
        }}
      >
        {trigger}
      </button>
      {anchor ? (
        <Popover anchor={anchor} onClose={close} label={label} role="menu" align={align} onKeyDown={moveFocus} className="min-w-52 py-1">
          {children(close)}
        </Popover>
      ) : null}
    </>
  );
}

const itemClass =
  "flex w-full items-center gap-2 px-3 py-1.5 text-left text-sm text-slate-700 hover:bg-slate-100 focus:bg-slate-100 focus:outline-none disabled:text-slate-400";

export function MenuItem({ onSelect, children, disabled, needs }: { onSelect: () => void; children: ReactNode; disabled?: boolean; needs?: Role }) {
  const access = useAccess(needs ?? "viewer");
  const off = disabled || (needs !== undefined && !access.allowed);
  return (
    <button type="button" role="menuitem" className={itemClass} disabled={off} aria-disabled={off} title={needs !== undefined ? access.why : undefined} onClick={onSelect}>
      {children}
    </button>
  );
}

export const menuItemClass = itemClass;

export function MenuSeparator() {
  return <div role="separator" className="my-1 border-t border-slate-100" />;
}
