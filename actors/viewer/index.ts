/**
 * berth's own inspector page: live (`client.serveViewer`), recorded (`ClientOptions.record`) and
 * replayed (`serveRecording`). See docs/viewer.md.
 * @module
 */
export { ViewerFeed, type RecordSink, type ViewerFeedOptions } from './feed.ts';
export { startRecording, readRecording, type Recorder, type Recording, type RecordingHeader } from './recording.ts';
export { startViewerServer, pageSize, PAGE_FILES, type ViewerServer, type ViewerServeOptions, type ViewerSource, type ViewerLogSource } from './server.ts';
export { serveRecording, openLiveViewer, viewerPageUrl, untilInterrupted, untilPagesClosed } from './open.ts';
export { chartOf, type ChartGraph } from './chart.ts';
export { layoutChart, type PlacedChart } from './layout.ts';
export { berthCharts } from './machine-charts.ts';
export { InvalidViewerOptionsError, RecordingFormatError } from './errors.ts';
export type { ViewerRecord } from './records.ts';
