// "Record" in the notes view: a voice memo from the microphone (MediaRecorder, Opus in WebM or
// Ogg, whichever the browser makes), uploaded through the files route like any dropped file.
// The server transcribes it with the configured speech-to-text service; without one the memo is
// kept and marked failed with the setting to set, as for any file Loci cannot read yet.

import { path, uploadFile } from "./api.js";
import { $, toast } from "./dom.js";

const TYPES = ["audio/webm;codecs=opus", "audio/ogg;codecs=opus", "audio/webm"];
const button = $("#record-button");
const status = $("#record-status");
let recording = null; // {recorder, stream, chunks, started} while the microphone is on

function supported() {
  return Boolean(navigator.mediaDevices?.getUserMedia && window.MediaRecorder);
}

function memoName(type, when) {
  const stamp = when.toISOString().slice(0, 16).replace("T", "-").replace(":", "");
  return `voice-memo-${stamp}.${type.includes("ogg") ? "ogg" : "webm"}`;
}

function say(text) {
  status.hidden = !text;
  status.textContent = text || "";
}

async function start() {
  let stream;
  try {
    stream = await navigator.mediaDevices.getUserMedia({ audio: true });
  } catch (error) {
    toast(`No microphone: ${error.message || error.name}`, "error");
    return;
  }
  const mimeType = TYPES.find((t) => MediaRecorder.isTypeSupported(t)) || "";
  const recorder = new MediaRecorder(stream, mimeType ? { mimeType } : {});
  const chunks = [];
  recording = { recorder, stream, chunks, started: new Date() };
  recorder.addEventListener("dataavailable", (event) => {
    if (event.data.size) chunks.push(event.data);
  });
  recorder.start(1000); // a piece a second: a long memo is not held as one growing buffer
  button.textContent = "Stop";
  button.setAttribute("aria-pressed", "true");
  say("Recording…");
}

function stop(brain) {
  const { recorder, stream, chunks, started } = recording;
  recording = null;
  button.textContent = "Record";
  button.setAttribute("aria-pressed", "false");
  recorder.addEventListener(
    "stop",
    async () => {
      for (const track of stream.getTracks()) track.stop();
      const type = recorder.mimeType || "audio/webm";
      const file = new File(chunks, memoName(type, started), { type: type.split(";")[0] });
      say("Uploading…");
      try {
        const result = await uploadFile(`/brains/${path(brain.name)}/files`, file, () => {});
        if (result.error) throw new Error(result.error);
        toast(`Saved ${file.name}: it is being transcribed (see Files).`);
        say("");
      } catch (error) {
        say(`Not saved: ${error.message}`);
      }
    },
    { once: true },
  );
  recorder.stop();
}

// `brain()` is the brain the notes view shows; a viewer cannot record into it.
export function setupRecorder(brain) {
  button.hidden = !supported();
  button.addEventListener("click", () => {
    const target = brain();
    if (!target) return;
    if (recording) stop(target);
    else start();
  });
}

export function canRecord(writable) {
  button.disabled = !writable;
}
